"""`daharness view`: runs and their samples in a browser, served on 127.0.0.1 or exported as static HTML."""
