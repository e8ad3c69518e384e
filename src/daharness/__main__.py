from daharness.cli import main

main()
