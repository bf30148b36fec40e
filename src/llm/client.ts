/**
 * @module llm/client — a minimal client for an OpenAI-compatible chat endpoint
 * (`POST {base}/chat/completions`). Used for insights and uncertain contradictions when
 * FLASHBULB_LLM_BASE_URL and FLASHBULB_LLM_MODEL are set; every caller falls back to the
 * heuristic path when it fails.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LlmClient {
  readonly model: string;
  chat(messages: ChatMessage[]): Promise<string>;
}

export function createLlmClient(opts: {
  baseUrl: string;
  model: string;
  apiKey: string;
  timeoutMs: number;
}): LlmClient {
  return {
    model: opts.model,
    async chat(messages) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (opts.apiKey !== '') headers['authorization'] = `Bearer ${opts.apiKey}`;
      const res = await fetch(`${opts.baseUrl}/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: opts.model, messages, temperature: 0.2 }),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      if (!res.ok) throw new Error(`LLM endpoint answered ${res.status}`);
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
      const content = body.choices?.[0]?.message?.content;
      if (typeof content !== 'string' || content.trim() === '')
        throw new Error('LLM reply has no message content');
      return content.trim();
    },
  };
}

/** Parses the first JSON object in a model reply (models like to wrap JSON in prose or fences). */
export function parseJsonReply(text: string): Record<string, unknown> | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    const v: unknown = JSON.parse(text.slice(start, end + 1));
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
