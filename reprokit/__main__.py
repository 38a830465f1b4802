from reprokit.cli import main

main()
