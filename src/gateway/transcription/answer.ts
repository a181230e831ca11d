/**
 * Reading a transcription's answer for its log and its client: the audio's length as the provider
 * measured it, the spoken text of a text, srt or vtt answer, and request_breakdown as a header where
 * the answer is not JSON.
 */
import type { TranscriptionRequest } from './request.js';

/** The audio's length as the provider measured it: verbose_json's duration, or json's usage in seconds. */
export function upstreamSeconds(parsed: Record<string, unknown> | null): number | null {
  if (parsed === null) return null;
  if (typeof parsed.duration === 'number' && parsed.duration >= 0) return parsed.duration;
  const usage = parsed.usage as { type?: unknown; seconds?: unknown } | undefined;
  if (usage?.type === 'duration' && typeof usage.seconds === 'number' && usage.seconds >= 0) return usage.seconds;
  return null;
}

/** The spoken text of a text, srt or vtt answer: without cue numbers, timings and the WEBVTT header. */
export function transcriptOf(raw: string, request: Pick<TranscriptionRequest, 'responseFormat'>): string {
  if (request.responseFormat === 'text') return raw.trim();
  const lines = raw.split(/\r?\n/);
  const spoken = lines.filter((line, i) => {
    const t = line.trim();
    if (t === '' || t.includes('-->') || /^\d+$/.test(t)) return false;
    if (i === 0 && t.startsWith('WEBVTT')) return false;
    return !/^(NOTE|STYLE|REGION)\b/.test(t);
  });
  return spoken.map((l) => l.trim()).join(' ');
}

/** The longest X-Request-Breakdown: HTTP clients refuse answers whose headers pass 16 KB in all. */
export const MAX_BREAKDOWN_HEADER = 8 * 1024;

/**
 * request_breakdown as a header value: JSON with every character past ASCII escaped (a header holds
 * Latin-1 only), at most MAX_BREAKDOWN_HEADER long — a long prompt, then the metadata, are cut to fit
 * and named in `truncated_fields`, as list previews do.
 */
export function breakdownHeader(breakdown: Record<string, unknown>): string {
  const ascii = (value: unknown) =>
    JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  let text = ascii(breakdown);
  if (text.length <= MAX_BREAKDOWN_HEADER) return text;
  const cut: string[] = [];
  const request = { ...(breakdown.full_request as Record<string, unknown>) };
  if (typeof request.prompt === 'string' && request.prompt.length > 1000) {
    request.prompt = request.prompt.slice(0, 1000);
    cut.push('full_request.prompt');
  }
  let smaller: Record<string, unknown> = { ...breakdown, full_request: request, truncated_fields: cut };
  text = ascii(smaller);
  if (text.length > MAX_BREAKDOWN_HEADER) {
    cut.push('metadata');
    smaller = { ...smaller, metadata: null, truncated_fields: cut };
    text = ascii(smaller);
  }
  return text;
}
