from compliance_api.cli import main

main()
