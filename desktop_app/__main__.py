from desktop_app.app import main

raise SystemExit(main())
