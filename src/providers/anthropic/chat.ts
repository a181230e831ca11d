/**
 * Chat completions served by Claude: the call translated to Anthropic's Messages API (chat-to-messages.ts),
 * its answer, stream and errors back to OpenAI's shape (messages-to-chat.ts, stream-to-chunks.ts,
 * errors-to-chat.ts).
 */
import type { ChatTranslation } from '../chat-translation.js';
import { chatToMessages } from './chat-to-messages.js';
import { chatErrorOf } from './errors-to-chat.js';
import { messageToChat } from './messages-to-chat.js';
import { AnthropicStreamTranslator } from './stream-to-chunks.js';

export const claudeChat: ChatTranslation = {
  path: '/v1/messages',
  request: chatToMessages,
  answer: (body) => messageToChat(body),
  stream: ({ includeUsage }) => new AnthropicStreamTranslator({ includeUsage }),
  error: chatErrorOf,
};
