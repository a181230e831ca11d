/**
 * A response from the response cache as the stream a streamed Responses call expects (docs/api.md
 * "Response cache"): the stored response told as the provider's events — `response.created` and
 * `response.in_progress` (the response as it began: no output, no usage), then per output item its
 * `output_item.added`, its parts and their text (output text, refusal, reasoning summary and text,
 * function-call arguments, a custom tool's input) each as one delta and its `done`, its
 * `output_item.done`, and last `response.completed` with the whole response. Every event carries its
 * `type` and its `sequence_number`, from 0; there is no `[DONE]`. Only event types the provider sends
 * are used: the OpenAI clients' stream helpers refuse any other.
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown) => (typeof v === 'string' ? v : '');

export interface ResponseReplayOptions {
  /** Events written just before the last one (request_breakdown), as they are. */
  last?: string;
}

export function replayResponseAsStream(response: Json, options: ResponseReplayOptions = {}): string {
  let out = '';
  let sequence = 0;
  const emit = (type: string, fields: Json) => {
    out += `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: sequence++ })}\n\n`;
  };
  const { output_text: _derived, ...whole } = response;
  const begun: Json = { ...whole, status: 'in_progress', output: [], usage: null };
  if ('completed_at' in whole) begun.completed_at = null;
  emit('response.created', { response: begun });
  emit('response.in_progress', { response: begun });
  const items = Array.isArray(whole.output) ? whole.output : [];
  items.forEach((item, index) => {
    if (isObject(item)) emitItem(emit, item, index);
  });
  out += options.last ?? '';
  emit('response.completed', { response: whole });
  return out;
}

type Emit = (type: string, fields: Json) => void;

/** One output item: added (as it began), its parts and their deltas, done (whole). */
function emitItem(emit: Emit, item: Json, output_index: number): void {
  const item_id = item.id;
  const inProgress = 'status' in item ? { status: 'in_progress' } : {};
  const at = { item_id, output_index };
  switch (item.type) {
    case 'message': {
      const content = Array.isArray(item.content) ? item.content.filter(isObject) : [];
      emit('response.output_item.added', { output_index, item: { ...item, ...inProgress, content: [] } });
      content.forEach((part, content_index) => emitMessagePart(emit, { ...at, content_index }, part));
      break;
    }
    case 'reasoning': {
      const summary = Array.isArray(item.summary) ? item.summary.filter(isObject) : [];
      const content = Array.isArray(item.content) ? item.content.filter(isObject) : null;
      const begun: Json = { ...item, ...inProgress, summary: [] };
      if (content !== null) begun.content = [];
      emit('response.output_item.added', { output_index, item: begun });
      summary.forEach((part, summary_index) => {
        const where = { ...at, summary_index };
        emit('response.reasoning_summary_part.added', { ...where, part: { ...part, text: '' } });
        if (text(part.text) !== '') emit('response.reasoning_summary_text.delta', { ...where, delta: part.text });
        emit('response.reasoning_summary_text.done', { ...where, text: text(part.text) });
        emit('response.reasoning_summary_part.done', { ...where, part });
      });
      (content ?? []).forEach((part, content_index) => {
        const where = { ...at, content_index };
        emit('response.content_part.added', { ...where, part: { ...part, text: '' } });
        if (text(part.text) !== '') emit('response.reasoning_text.delta', { ...where, delta: part.text });
        emit('response.reasoning_text.done', { ...where, text: text(part.text) });
        emit('response.content_part.done', { ...where, part });
      });
      break;
    }
    case 'function_call': {
      emit('response.output_item.added', { output_index, item: { ...item, ...inProgress, arguments: '' } });
      const args = text(item.arguments);
      if (args !== '') emit('response.function_call_arguments.delta', { ...at, delta: args });
      emit('response.function_call_arguments.done', { ...at, name: item.name, arguments: args });
      break;
    }
    case 'custom_tool_call': {
      emit('response.output_item.added', { output_index, item: { ...item, ...inProgress, input: '' } });
      const input = text(item.input);
      if (input !== '') emit('response.custom_tool_call_input.delta', { ...at, delta: input });
      emit('response.custom_tool_call_input.done', { ...at, input });
      break;
    }
    default:
      // A hosted tool's call (web search, file search, …) or an item of a kind added later: whole.
      emit('response.output_item.added', { output_index, item: { ...item, ...inProgress } });
  }
  emit('response.output_item.done', { output_index, item });
}

/** A message's content part: output text or a refusal as one delta; another kind of part whole. */
function emitMessagePart(emit: Emit, where: Json, part: Json): void {
  if (part.type === 'output_text') {
    const whole = text(part.text);
    const logprobs = Array.isArray(part.logprobs) ? part.logprobs : [];
    emit('response.content_part.added', { ...where, part: { ...part, text: '', annotations: [], logprobs: [] } });
    if (whole !== '') emit('response.output_text.delta', { ...where, delta: whole, logprobs });
    emit('response.output_text.done', { ...where, text: whole, logprobs });
  } else if (part.type === 'refusal') {
    const whole = text(part.refusal);
    emit('response.content_part.added', { ...where, part: { ...part, refusal: '' } });
    if (whole !== '') emit('response.refusal.delta', { ...where, delta: whole });
    emit('response.refusal.done', { ...where, refusal: whole });
  } else {
    emit('response.content_part.added', { ...where, part });
  }
  emit('response.content_part.done', { ...where, part });
}
