/** `npm start`: the same as `gatelog serve`. */
import { runCli } from './cli.js';

await runCli(['serve']);
