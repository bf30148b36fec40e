/**
 * @module http/sse — a subscription's pushes as Server-Sent Events. The sink exists before the
 * stream does (so opening can still fail with a normal error reply); once attached it writes
 * `event: subscribed`, then one unnamed event per push with `id:` = sequence number, a comment
 * line every 15 s, and `event: closed` when the subscription ends.
 */
import { memoryJson } from '../api/views.ts';
import { isoFromUs } from '../model/time.ts';
import { wellFormedJson } from '../model/unicode.ts';
import type { CloseReason, PushEvent, PushSink } from '../subscribe/registry.ts';
import type { OutStream } from './exchange.ts';

const HEARTBEAT_MS = 15_000;

export class SseSink implements PushSink {
  #stream: OutStream | null = null;
  #early: string[] = [];
  #drain: (() => void) | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #closed = false;

  attach(stream: OutStream, subscriptionId: number, onGone: () => void): void {
    this.#stream = stream;
    stream.onClose(() => {
      this.#stop();
      onGone();
    });
    stream.onWritable(() => this.#drain?.());
    stream.write(
      `event: subscribed\ndata: ${wellFormedJson({ subscription_id: subscriptionId })}\n\n`,
    );
    for (const chunk of this.#early.splice(0)) stream.write(chunk);
    this.#heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), HEARTBEAT_MS);
    if (this.#closed) this.#finish();
  }

  send(event: PushEvent): boolean {
    const data = {
      ...event,
      memory: memoryJson(event.memory),
      push_timestamp_iso: isoFromUs(event.push_timestamp_us),
    };
    const chunk = `id: ${event.sequence_number}\ndata: ${wellFormedJson(data)}\n\n`;
    if (!this.#stream) {
      this.#early.push(chunk);
      return true;
    }
    return this.#stream.write(chunk);
  }

  onDrain(cb: () => void): void {
    this.#drain = cb;
  }

  close(reason: CloseReason): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#reason = reason;
    if (this.#stream) this.#finish();
  }

  #reason: CloseReason = 'closed';

  #finish(): void {
    const stream = this.#stream;
    this.#stop();
    if (!stream || stream.closed) return;
    stream.write(`event: closed\ndata: ${wellFormedJson({ reason: this.#reason })}\n\n`);
    stream.end();
  }

  #stop(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
  }
}
