/**
 * The token-counting thread: the tokenizer's tables (about 40 MB) live here, loaded on its first job,
 * and counting a 20 MB body never holds the event loop.
 */
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { serveJobs } from '../../workers/serve.js';
import { type Encode, measureTexts, type TextLimits, type TextMeasure } from './tokens.js';

export interface TokenJob {
  texts: string[];
  limits: TextLimits;
}

serveJobs<TokenJob, TextMeasure>(({ texts, limits }) => measureTexts(encode as Encode, texts, limits));
