/** @module reflection/prompts — what the language model (or an agent, in the deprecated flow) is asked. */
import type { ChatMessage } from '../llm/client.ts';

export const INSIGHT_SYSTEM_PROMPT =
  "You distil an agent's memories into insights. Given a group of related memories, write ONE concise insight " +
  '(one or two sentences) that generalises what they have in common: a pattern, a preference, a recurring fact. ' +
  'Do not invent details that the memories do not support. Reply with JSON only: ' +
  '{"insight": string, "confidence": number between 0 and 1, "valid": boolean (false if the memories share no real theme)}.';

export function insightUserPrompt(statements: readonly string[], tags: readonly string[]): string {
  const list = statements.map((s, i) => `${i + 1}. ${s}`).join('\n');
  return `Memories:\n${list}\n\nDistinguishing terms: ${tags.join(', ') || '(none)'}`;
}

export function insightMessages(
  statements: readonly string[],
  tags: readonly string[],
): ChatMessage[] {
  return [
    { role: 'system', content: INSIGHT_SYSTEM_PROMPT },
    { role: 'user', content: insightUserPrompt(statements, tags) },
  ];
}

export const CONTRADICTION_SYSTEM_PROMPT =
  "You judge whether two statements from an agent's memory conflict. Reply with JSON only: " +
  '{"verdict": "contradiction" | "revision" | "dismiss", "confidence": number between 0 and 1}. ' +
  '"revision" means the second statement updates the first (the fact changed over time); "contradiction" means ' +
  'both cannot be true; "dismiss" means they are compatible.';

export function contradictionMessages(older: string, newer: string): ChatMessage[] {
  return [
    { role: 'system', content: CONTRADICTION_SYSTEM_PROMPT },
    { role: 'user', content: `First (older): ${older}\nSecond (newer): ${newer}` },
  ];
}
