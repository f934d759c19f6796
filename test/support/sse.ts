// Reading a paid event stream as a client does, and waiting for a condition (never for a fixed time).

/** The server-sent events of a response, each `data:` value as it arrives. */
export async function* sseData(response: Response): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body!) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split('\n').find((line) => line.startsWith('data: '));
      if (data) yield data.slice(6);
    }
  }
}

/** Waits until `probe` gives a value (not undefined or false), checking again at each turn of the event loop. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
