#!/usr/bin/env node
'use strict'
// The `dsh-shell-env` command; see `dsh-shell-env --help` and cli/.

require('../cli/main.js').cli()
