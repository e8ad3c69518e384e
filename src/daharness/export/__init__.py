"""Writing daharness runs in other tools' formats (`daharness export`)."""
