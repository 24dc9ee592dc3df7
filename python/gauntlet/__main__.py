from gauntlet.cli import main

main()
