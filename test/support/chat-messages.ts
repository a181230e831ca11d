/** Messages of OpenAI's chat format that tests' conversations hold. */

/** An assistant's turn that calls one tool (no text): `args` is the call's arguments as JSON text. */
export function toolCallTurn(id: string, name: string, args = '{}') {
  return {
    role: 'assistant' as const,
    content: null,
    tool_calls: [{ id, type: 'function' as const, function: { name, arguments: args } }],
  };
}
