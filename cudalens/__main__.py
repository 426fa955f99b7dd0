from cudalens.cli.main import main

raise SystemExit(main())
