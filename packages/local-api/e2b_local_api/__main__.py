from e2b_local_api.cli import main

main()
