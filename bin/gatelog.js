#!/usr/bin/env node
// The installed `gatelog` command runs the compiled CLI (`npm run build` produces dist/).
import { runCli } from '../dist/src/cli.js';

await runCli(process.argv.slice(2));
