#!/usr/bin/env node
import('../dist/cli/main.js').catch((err) => {
  process.stderr.write(`callscript: could not start (${err && err.message}). Run "npm run build" first.\n`);
  process.exit(2);
});
