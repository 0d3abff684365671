from mockbroker.cli import main

raise SystemExit(main())
