'use strict'
// The subcommands, in the order help lists them.

module.exports = [
  require('./env.js'),
  require('./get.js'),
  require('./explain.js'),
  require('./run.js'),
  require('./catalog.js'),
  require('./limits.js'),
]
