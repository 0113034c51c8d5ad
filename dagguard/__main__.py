from dagguard.cli import main

main()
