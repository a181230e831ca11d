/**
 * The parameters of an OpenAI chat call, besides its messages, as Anthropic's: sampling, stop
 * sequences, the token limit, tools and tool_choice, the end user, and reasoning_effort as extended
 * thinking. A parameter that would change the answer in a way Claude cannot honour is refused (400,
 * `unsupported_parameter`, naming it) rather than dropped: the caller would otherwise get an answer
 * that silently ignores what it asked for.
 */
import { invalid, unsupported } from './chat-content.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const given = (v: unknown) => v !== undefined && v !== null;

/** Anthropic requires max_tokens; OpenAI does not. The answer's budget when the caller set none. */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * reasoning_effort → extended thinking's budget_tokens (at least 1024, Anthropic's minimum). "none" is
 * thinking off, as Claude's default is.
 */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 4096,
  xhigh: 8192,
};

/**
 * The OpenAI fields read here (or by the messages' translation), each consumed: whatever else a
 * caller sends goes to Anthropic unchanged, so that Claude's own parameters (top_k, thinking…) can be
 * used through the OpenAI client's extra body. `store`, `service_tier`, `prompt_cache_key`,
 * `prompt_cache_retention` and `verbosity` are OpenAI's own bookkeeping or hints with no Claude
 * counterpart, and are left out.
 */
export const OPENAI_FIELDS = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'user',
  'safety_identifier',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning_effort',
  'n',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'audio',
  'modalities',
  'prediction',
  'web_search_options',
  'functions',
  'function_call',
  'response_format',
  'metadata',
  'store',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'verbosity',
]);

/** Fields refused whenever they are given (not null). */
const REFUSED: Readonly<Record<string, string>> = {
  seed: 'Claude has no seed: its answers cannot be made repeatable.',
  top_logprobs: 'Claude does not return log probabilities.',
  audio: 'Claude does not answer with audio.',
  prediction: 'Claude has no predicted outputs.',
  web_search_options: "OpenAI's web search cannot be sent to Claude.",
  functions: 'the legacy functions parameter cannot be sent to Claude; use tools.',
  function_call: 'the legacy function_call parameter cannot be sent to Claude; use tool_choice.',
};

/** The parameters Claude cannot honour: each a 400 naming the field. */
export function refuseUntranslatable(fields: Json): void {
  for (const [name, why] of Object.entries(REFUSED)) {
    if (given(fields[name])) throw unsupported(name, `${name} is not supported for Claude models: ${why}`);
  }
  if (given(fields.n) && fields.n !== 1) {
    throw unsupported('n', 'n must be 1 for Claude models: Claude answers with one choice.');
  }
  if (given(fields.logprobs) && fields.logprobs !== false) {
    throw unsupported('logprobs', 'logprobs is not supported for Claude models: Claude does not return them.');
  }
  if (given(fields.logit_bias) && !(isObject(fields.logit_bias) && Object.keys(fields.logit_bias).length === 0)) {
    throw unsupported('logit_bias', 'logit_bias is not supported for Claude models.');
  }
  for (const name of ['frequency_penalty', 'presence_penalty']) {
    if (given(fields[name]) && fields[name] !== 0) {
      throw unsupported(name, `${name} is not supported for Claude models (only 0 is accepted).`);
    }
  }
  const modalities = fields.modalities;
  if (given(modalities) && !(Array.isArray(modalities) && modalities.length === 1 && modalities[0] === 'text')) {
    throw unsupported('modalities', 'modalities must be ["text"] for Claude models.');
  }
  const format = fields.response_format;
  if (given(format) && !(isObject(format) && format.type === 'text')) {
    throw unsupported(
      'response_format',
      'response_format must be {"type": "text"} for Claude models: JSON modes cannot be translated faithfully.',
    );
  }
}

function unitInterval(fields: Json, name: 'temperature' | 'top_p'): number | undefined {
  const value = fields[name];
  if (!given(value)) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw invalid(name, `${name} must be a number from 0 to 1 for Claude models (got ${JSON.stringify(value)}).`);
  }
  return value;
}

function maxTokensOf(fields: Json): { value: number; param: string } | null {
  for (const param of ['max_completion_tokens', 'max_tokens']) {
    const value = fields[param];
    if (!given(value)) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw invalid(param, `${param} must be a positive integer.`);
    }
    return { value, param };
  }
  return null;
}

function stopSequences(stop: unknown): string[] | undefined {
  if (!given(stop)) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(list)) throw invalid('stop', 'stop must be a string or a list of strings.');
  list.forEach((s, i) => {
    if (typeof s !== 'string' || s === '') throw invalid(`stop.${i}`, `stop.${i} must be a non-empty string.`);
  });
  return list.length > 0 ? (list as string[]) : undefined;
}

function toolsOf(tools: unknown): Json[] | undefined {
  if (!given(tools)) return undefined;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be a list.');
  return tools.map((tool, i) => {
    if (!isObject(tool)) throw invalid(`tools.${i}`, `tools.${i} must be an object.`);
    if (tool.type !== 'function') {
      throw unsupported(
        `tools.${i}.type`,
        `tools.${i}.type '${String(tool.type)}' cannot be sent to Claude; only function tools.`,
      );
    }
    const fn = isObject(tool.function) ? tool.function : null;
    if (fn === null || typeof fn.name !== 'string' || fn.name === '') {
      throw invalid(`tools.${i}.function.name`, `tools.${i}.function.name must be the tool's name.`);
    }
    if (given(fn.parameters) && !isObject(fn.parameters)) {
      throw invalid(`tools.${i}.function.parameters`, `tools.${i}.function.parameters must be a JSON Schema object.`);
    }
    const out: Json = {
      name: fn.name,
      input_schema: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
    };
    if (typeof fn.description === 'string') out.description = fn.description;
    return out;
  });
}

/** tool_choice (and parallel_tool_calls) as Anthropic's tool_choice; undefined: Claude's default (auto). */
function toolChoiceOf(choice: unknown, parallel: unknown, hasTools: boolean): Json | undefined {
  if (given(parallel) && typeof parallel !== 'boolean') {
    throw invalid('parallel_tool_calls', 'parallel_tool_calls must be a boolean.');
  }
  let out: Json | undefined;
  if (!given(choice)) out = undefined;
  else if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'required') out = { type: 'any' };
  else if (choice === 'none') out = { type: 'none' };
  else if (isObject(choice) && choice.type === 'function') {
    const fn = isObject(choice.function) ? choice.function : null;
    if (fn === null || typeof fn.name !== 'string' || fn.name === '') {
      throw invalid('tool_choice.function.name', 'tool_choice.function.name must name one of the tools.');
    }
    out = { type: 'tool', name: fn.name };
  } else if (isObject(choice) && typeof choice.type === 'string') {
    throw unsupported('tool_choice.type', `tool_choice.type '${choice.type}' cannot be sent to Claude.`);
  } else {
    throw invalid(
      'tool_choice',
      'tool_choice must be "auto", "required", "none" or {type: "function", function: {name}}.',
    );
  }
  if (!hasTools) {
    // Without tools, "auto" and "none" mean what Claude does anyway; a demand for a tool cannot be met.
    if (out === undefined || out.type === 'auto' || out.type === 'none') return undefined;
    throw invalid('tool_choice', 'tool_choice asks for a tool call, but the call has no tools.');
  }
  if (parallel === false && out?.type !== 'none')
    out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/**
 * reasoning_effort as extended thinking: `{type: "enabled", budget_tokens}` by THINKING_BUDGETS. The
 * budget must stay below max_tokens: a caller's own max_completion_tokens that leaves no room is a 400;
 * without one, the answer's default budget is added on top, so that thinking does not eat the answer.
 * Claude's extended thinking also fixes temperature at 1, top_p at 0.95 or more, and forbids forcing a
 * tool: each of those asked for with it is a 400 naming the field.
 */
function thinkingOf(
  fields: Json,
  maxTokens: { value: number; param: string } | null,
  toolChoice: Json | undefined,
): { thinking: Json; maxTokens: number } | null {
  const effort = fields.reasoning_effort;
  if (!given(effort) || effort === 'none') return null;
  // hasOwn: "constructor" is not an effort.
  const budget =
    typeof effort === 'string' && Object.hasOwn(THINKING_BUDGETS, effort) ? THINKING_BUDGETS[effort] : null;
  if (budget === null) {
    throw invalid(
      'reasoning_effort',
      `reasoning_effort must be one of none, ${Object.keys(THINKING_BUDGETS).join(', ')} (got ${JSON.stringify(effort)}).`,
    );
  }
  if (given(fields.thinking)) {
    throw invalid('reasoning_effort', 'give reasoning_effort or thinking, not both.');
  }
  if (maxTokens !== null && budget >= maxTokens.value) {
    throw invalid(
      'reasoning_effort',
      `reasoning_effort '${effort}' gives Claude a thinking budget of ${budget} tokens, which must be below ` +
        `${maxTokens.param} (${maxTokens.value}): raise ${maxTokens.param} or lower reasoning_effort.`,
    );
  }
  if (given(fields.temperature) && fields.temperature !== 1) {
    throw invalid('temperature', 'temperature must be 1 (or absent) with reasoning_effort on a Claude model.');
  }
  if (typeof fields.top_p === 'number' && fields.top_p < 0.95) {
    throw invalid('top_p', 'top_p must be at least 0.95 (or absent) with reasoning_effort on a Claude model.');
  }
  if (toolChoice?.type === 'any' || toolChoice?.type === 'tool') {
    throw invalid('tool_choice', 'tool_choice cannot force a tool call with reasoning_effort on a Claude model.');
  }
  return {
    thinking: { type: 'enabled', budget_tokens: budget },
    maxTokens: maxTokens?.value ?? budget + DEFAULT_MAX_TOKENS,
  };
}

/** Every Anthropic parameter of the request but `model`, `system` and `messages`. */
export function translateParams(fields: Json): Json {
  refuseUntranslatable(fields);
  const out: Json = {};
  // Claude's own parameters, sent through the OpenAI client's extra body, go as they came.
  for (const [name, value] of Object.entries(fields)) if (!OPENAI_FIELDS.has(name)) out[name] = value;
  const maxTokens = maxTokensOf(fields);
  const tools = toolsOf(fields.tools);
  const toolChoice = toolChoiceOf(fields.tool_choice, fields.parallel_tool_calls, (tools?.length ?? 0) > 0);
  const thinking = thinkingOf(fields, maxTokens, toolChoice);
  out.max_tokens = thinking?.maxTokens ?? maxTokens?.value ?? DEFAULT_MAX_TOKENS;
  if (thinking !== null) out.thinking = thinking.thinking;
  const temperature = unitInterval(fields, 'temperature');
  if (temperature !== undefined) out.temperature = temperature;
  const topP = unitInterval(fields, 'top_p');
  if (topP !== undefined) out.top_p = topP;
  const stop = stopSequences(fields.stop);
  if (stop !== undefined) out.stop_sequences = stop;
  if (tools !== undefined && tools.length > 0) out.tools = tools;
  if (toolChoice !== undefined) out.tool_choice = toolChoice;
  const userParam = given(fields.user) ? 'user' : 'safety_identifier';
  const user = fields[userParam];
  if (given(user)) {
    if (typeof user !== 'string') throw invalid(userParam, `${userParam} must be a string.`);
    if (user !== '') out.metadata = { user_id: user };
  }
  if (fields.stream === true) out.stream = true;
  return out;
}
