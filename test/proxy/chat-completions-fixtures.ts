/** What the tests of POST /api/chat/completions send, look for, and call it with, shared by its split files. */
import { DEFAULT_CHAT_CONTENT } from '../support/fake-chat-answers.js';
import { fake, postTo } from '../support/proxied-route.js';
import { dataOf, type SseEvent } from '../support/sse.js';

export const HELLO = DEFAULT_CHAT_CONTENT.join('');

export const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Say hello.' },
] as const;

/** A chunk that carries a piece of the first choice's text. */
export const hasContent = (event: SseEvent) =>
  event.data !== '[DONE]' && Boolean(dataOf(event).choices?.[0]?.delta?.content);

/** POSTs a JSON body to the route as it is (no client in between). */
export const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
  postTo('/api/chat/completions', body, signal);

/** The last /chat/completions exchange the fake saw, and the JSON body it was sent. */
export const lastSent = () => fake.chats.at(-1)!;
export const sentJson = () => lastSent().request.json as Record<string, unknown>;
