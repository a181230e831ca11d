/**
 * One OpenAI chat message's content as Anthropic content blocks: text parts, images (a data: URL as a
 * base64 source, an http(s) URL as a url source), PDF files, an assistant's tool calls (tool_use, their
 * arguments parsed) and thinking blocks sent back, a tool message's result (tool_result). Empty texts
 * are left out: Anthropic refuses an empty text block. Whatever has no Claude equivalent is a 400
 * naming the exact field, as a dotted path (`messages.3.content.1.image_url.url`).
 */
import { AppError } from '../../errors.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export const invalid = (param: string, message: string) => new AppError(400, 'invalid_value', message, param);
export const unsupported = (param: string, message: string) =>
  new AppError(400, 'unsupported_parameter', message, param);

/** Claude reads these image types; `image/jpg`, a common misnomer, is read as JPEG. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** `cache_control` on a part (an Anthropic prompt-caching mark some OpenAI-shaped clients send) is kept. */
function withCacheControl(block: Json, part: Json): Json {
  return isObject(part.cache_control) ? { ...block, cache_control: part.cache_control } : block;
}

function textBlock(text: string, part: Json = {}): Json[] {
  return text === '' ? [] : [withCacheControl({ type: 'text', text }, part)];
}

/** A `data:` URL's media type (lower case) and base64 payload, or null when it is not a base64 data URL. */
function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma === -1) return null;
  const [mediaType, ...params] = url.slice(5, comma).split(';');
  if (!params.some((p) => p.trim().toLowerCase() === 'base64')) return null;
  return { mediaType: mediaType.trim().toLowerCase(), data: url.slice(comma + 1) };
}

function imageBlock(part: Json, at: string): Json {
  const image = part.image_url;
  const url = isObject(image) ? image.url : image;
  const param = isObject(image) ? `${at}.image_url.url` : `${at}.image_url`;
  if (typeof url !== 'string' || url === '') throw invalid(param, `${param} must be a URL (https: or data:).`);
  if (/^https?:\/\//i.test(url)) return withCacheControl({ type: 'image', source: { type: 'url', url } }, part);
  const parsed = parseDataUrl(url);
  if (parsed === null) {
    throw unsupported(param, `${param} must be an https: URL or a base64 data: URL (data:image/png;base64,…).`);
  }
  const mediaType = parsed.mediaType === 'image/jpg' ? 'image/jpeg' : parsed.mediaType;
  if (!IMAGE_TYPES.has(mediaType)) {
    throw unsupported(
      param,
      `${param} is an image of type '${parsed.mediaType}'; Claude reads ${[...IMAGE_TYPES].join(', ')}.`,
    );
  }
  return withCacheControl(
    { type: 'image', source: { type: 'base64', media_type: mediaType, data: parsed.data } },
    part,
  );
}

/** A `file` part: a PDF sent inline is a document block; a file uploaded to OpenAI is out of Claude's reach. */
function documentBlock(part: Json, at: string): Json {
  const file = isObject(part.file) ? part.file : null;
  if (file === null) throw invalid(`${at}.file`, `${at}.file must be an object with file_data.`);
  if (file.file_id !== undefined && file.file_id !== null) {
    throw unsupported(`${at}.file.file_id`, `${at}.file.file_id names an OpenAI file, which Claude cannot read.`);
  }
  const parsed = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : null;
  if (parsed === null || parsed.mediaType !== 'application/pdf') {
    throw unsupported(
      `${at}.file.file_data`,
      `${at}.file.file_data must be a PDF as a base64 data: URL (data:application/pdf;base64,…).`,
    );
  }
  const block: Json = {
    type: 'document',
    source: { type: 'base64', media_type: 'application/pdf', data: parsed.data },
  };
  if (typeof file.filename === 'string' && file.filename !== '') block.title = file.filename;
  return withCacheControl(block, part);
}

type PartKind = 'text' | 'refusal' | 'image_url' | 'file';

/**
 * `content` (a string, null, or a list of parts) as blocks, each part's type one of `allowed`.
 * `who` names the message kind in errors ("a system message").
 */
function contentBlocks(content: unknown, at: string, allowed: readonly PartKind[], who: string): Json[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return textBlock(content);
  if (!Array.isArray(content)) throw invalid(`${at}.content`, `${at}.content must be a string or a list of parts.`);
  return content.flatMap((part, j) => {
    const where = `${at}.content.${j}`;
    if (!isObject(part)) throw invalid(where, `${where} must be an object.`);
    const type = part.type;
    if (typeof type !== 'string' || !(allowed as readonly string[]).includes(type)) {
      throw unsupported(
        `${where}.type`,
        `${where}.type '${String(type)}' cannot be sent to Claude in ${who}; allowed: ${allowed.join(', ')}.`,
      );
    }
    if (type === 'image_url') return [imageBlock(part, where)];
    if (type === 'file') return [documentBlock(part, where)];
    const text = part[type];
    if (typeof text !== 'string') throw invalid(`${where}.${type}`, `${where}.${type} must be a string.`);
    return textBlock(text, part);
  });
}

/** A system or developer message: its texts, for the request's `system`. */
export function systemBlocks(message: Json, at: string): Json[] {
  return contentBlocks(message.content, at, ['text'], `a ${String(message.role)} message`);
}

export function userBlocks(message: Json, at: string): Json[] {
  return contentBlocks(message.content, at, ['text', 'image_url', 'file'], 'a user message');
}

/** A tool message: one tool_result block answering the tool_use of the same id. */
export function toolResultBlock(message: Json, at: string): Json {
  const id = message.tool_call_id;
  if (typeof id !== 'string' || id === '') {
    throw invalid(`${at}.tool_call_id`, `${at}.tool_call_id must name the tool call this message answers.`);
  }
  const content = message.content;
  const result: Json = { type: 'tool_result', tool_use_id: id };
  // A plain string stays a string, parts become blocks; an empty result is a tool_result without
  // content (Claude refuses empty text, not an empty result).
  if (typeof content === 'string') {
    if (content !== '') result.content = content;
  } else if (content !== undefined && content !== null) {
    const blocks = contentBlocks(content, at, ['text', 'image_url'], 'a tool message');
    if (blocks.length > 0) result.content = blocks;
  }
  return result;
}

/** `arguments` of a tool call: a JSON object as text; empty means no arguments. */
function toolInput(args: unknown, param: string): Json {
  if (args === undefined || args === null || (typeof args === 'string' && args.trim() === '')) return {};
  if (typeof args !== 'string') throw invalid(param, `${param} must be a string holding a JSON object.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw invalid(param, `${param} is not valid JSON; Claude needs the tool call's arguments as a JSON object.`);
  }
  if (!isObject(parsed)) throw invalid(param, `${param} must be a JSON object, not ${JSON.stringify(parsed)}.`);
  return parsed;
}

function toolUseBlocks(calls: unknown, at: string): Json[] {
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls)) throw invalid(`${at}.tool_calls`, `${at}.tool_calls must be a list.`);
  return calls.map((call, j) => {
    const where = `${at}.tool_calls.${j}`;
    if (!isObject(call)) throw invalid(where, `${where} must be an object.`);
    if (call.type !== undefined && call.type !== 'function') {
      throw unsupported(
        `${where}.type`,
        `${where}.type '${String(call.type)}' cannot be sent to Claude; only function.`,
      );
    }
    if (typeof call.id !== 'string' || call.id === '') throw invalid(`${where}.id`, `${where}.id must be a string.`);
    const fn = isObject(call.function) ? call.function : null;
    if (fn === null || typeof fn.name !== 'string' || fn.name === '') {
      throw invalid(`${where}.function.name`, `${where}.function.name must be the name of a tool.`);
    }
    return {
      type: 'tool_use',
      id: call.id,
      name: fn.name,
      input: toolInput(fn.arguments, `${where}.function.arguments`),
    };
  });
}

/**
 * `thinking_blocks` of an assistant message (as messages-to-chat.ts gives them out): sent back first,
 * signatures untouched, as Claude requires when a turn continues tool use under extended thinking.
 */
function thinkingBlocks(blocks: unknown, at: string): Json[] {
  if (blocks === undefined || blocks === null) return [];
  const param = `${at}.thinking_blocks`;
  if (!Array.isArray(blocks)) throw invalid(param, `${param} must be a list.`);
  return blocks.map((block, j) => {
    const ok =
      isObject(block) &&
      ((block.type === 'thinking' && typeof block.thinking === 'string' && typeof block.signature === 'string') ||
        (block.type === 'redacted_thinking' && typeof block.data === 'string'));
    if (!ok) {
      throw invalid(
        `${param}.${j}`,
        `${param}.${j} must be {type: "thinking", thinking, signature} or {type: "redacted_thinking", data}.`,
      );
    }
    return block;
  });
}

/** An assistant message: thinking sent back, then its text, then its tool calls. */
export function assistantBlocks(message: Json, at: string): Json[] {
  for (const legacy of ['function_call', 'audio'] as const) {
    if (message[legacy] !== undefined && message[legacy] !== null) {
      throw unsupported(`${at}.${legacy}`, `${at}.${legacy} cannot be sent to Claude.`);
    }
  }
  return [
    ...thinkingBlocks(message.thinking_blocks, at),
    ...contentBlocks(message.content, at, ['text', 'refusal'], 'an assistant message'),
    ...toolUseBlocks(message.tool_calls, at),
  ];
}
