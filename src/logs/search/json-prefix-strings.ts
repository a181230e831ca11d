/**
 * The string values of a JSON text that was cut short — the first characters of a larger document, as
 * the search index reads a long field (search-text.ts) — which JSON.parse cannot read. A scan, not a
 * parse: strings in document order, object keys left out, escapes decoded; the one the text ends inside
 * is kept as far as it goes, and said to be cut.
 */

const OBJECT = 1;
const ARRAY = 2;

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

export interface PrefixStrings {
  strings: string[];
  /** Whether the last string is cut off by the end of the text. */
  lastCut: boolean;
}

export function prefixJsonStrings(text: string): PrefixStrings {
  const strings: string[] = [];
  const stack: number[] = [];
  // In an object, whether the next string is a key (after `{` or `,`) rather than a value (after `:`).
  let keyNext = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== '"') {
      if (c === '{') {
        stack.push(OBJECT);
        keyNext = true;
      } else if (c === '[') {
        stack.push(ARRAY);
        keyNext = false;
      } else if (c === '}' || c === ']') {
        stack.pop();
        keyNext = false;
      } else if (c === ',') {
        keyNext = stack.at(-1) === OBJECT;
      } else if (c === ':') {
        keyNext = false;
      }
      i++;
      continue;
    }
    const isKey = keyNext && stack.at(-1) === OBJECT;
    keyNext = false;
    let value = '';
    let start = i + 1;
    let j = start;
    let closed = false;
    while (j < text.length) {
      const d = text[j];
      if (d === '"') {
        closed = true;
        break;
      }
      if (d !== '\\') {
        j++;
        continue;
      }
      value += text.slice(start, j);
      start = j;
      const e = text[j + 1];
      if (e === 'u') {
        const hex = text.slice(j + 2, j + 6);
        // An escape the cut went through is dropped whole.
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) break;
        value += String.fromCharCode(parseInt(hex, 16));
        j += 6;
      } else if (e === undefined) {
        break;
      } else {
        value += ESCAPES[e] ?? e;
        j += 2;
      }
      start = j;
    }
    if (closed) {
      value += text.slice(start, j);
      if (!isKey && value !== '') strings.push(value);
      i = j + 1;
      continue;
    }
    // The text ends inside this string (or inside an escape of it, dropped): the last one.
    value += text.slice(start, j);
    if (!isKey && value !== '') {
      strings.push(value);
      return { strings, lastCut: true };
    }
    break;
  }
  return { strings, lastCut: false };
}
