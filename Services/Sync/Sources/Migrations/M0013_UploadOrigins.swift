import LayerServer

/// The web origin a rich-content upload was opened for (`Upload-Origin`): pages there may use
/// its signed upload and download URLs from the browser (CORS).
let m0013UploadOrigins = Migration(13, "upload_origins", ["ALTER TABLE sync.content ADD COLUMN upload_origin text"])
