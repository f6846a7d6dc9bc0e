@main struct L { static func main() {} }
