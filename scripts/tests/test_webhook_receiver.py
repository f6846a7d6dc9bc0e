"""The sample webhook receiver's signature check (scripts/webhook-receiver.py)."""

import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("webhook_receiver", os.path.join(HERE, "..", "webhook-receiver.py"))
receiver = importlib.util.module_from_spec(spec)
spec.loader.exec_module(receiver)


class SignatureTests(unittest.TestCase):
    body = b"The quick brown fox jumps over the lazy dog"
    # HMAC-SHA1("key", body), the well-known test value.
    signature = "de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9"

    def test_the_signature_of_the_body_with_the_secret_is_accepted(self):
        self.assertTrue(receiver.signature_is_valid(b"key", self.body, self.signature))
        self.assertTrue(receiver.signature_is_valid(b"key", self.body, self.signature.upper()))

    def test_another_body_secret_or_no_signature_is_refused(self):
        self.assertFalse(receiver.signature_is_valid(b"key", self.body + b".", self.signature))
        self.assertFalse(receiver.signature_is_valid(b"other", self.body, self.signature))
        self.assertFalse(receiver.signature_is_valid(b"key", self.body, ""))


if __name__ == "__main__":
    unittest.main()
