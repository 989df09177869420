"""The `contextdesk` command line: a face over the application layer (`desktop_app.chats`).

Everything the window can do to a chat — send, edit, regenerate, retry, pin, exclude,
compact, preview the request, export — the command line can do too, through the same
`Chat` calls; its modules only parse and print:

- `parser`     `parse` (light: the window's start-up parses its arguments with it)
- `grammar`    every command's options and help texts (read only for a command)
- `commands`   `run`: opens the engine, runs a command, turns errors into exit statuses
- `arguments`  reading the arguments' values (KEY=VALUE, a message's number)
- `wording`    values worded for the terminal and for --json
- `chats`, `talk`, `repl`, `memory`, `context`, `costs`, `files`, `projects`, `mcp`:
  one module per group of commands

Kept empty of imports: `app.py` imports the parser on every start.
"""
