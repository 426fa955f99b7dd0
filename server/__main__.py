from cudalens.server.main import main

raise SystemExit(main())
