// A one-line progress indicator on stderr while a call runs (a generation and its settlement can take many
// seconds). Drawn only on a terminal: piped or logged output never gets control characters or stray lines.

export interface Progress {
  /** what is being waited for now ("generating and settling") */
  step(label: string): void;
  /** erases the line; call before printing a result or an error */
  done(): void;
}

const FRAMES = ['|', '/', '-', '\\'];

export function progressOn(stream: Pick<NodeJS.WriteStream, 'write'> & { isTTY?: boolean }): Progress {
  if (!stream.isTTY) return { step() {}, done() {} };
  const started = Date.now();
  let label = '';
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    stream.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${label}${seconds > 0 ? ` ${seconds}s` : ''}`);
  };
  return {
    step(next) {
      label = next;
      draw();
      timer ??= setInterval(draw, 250);
      timer.unref();
    },
    done() {
      if (timer === undefined) return; // nothing drawn since the last erase
      clearInterval(timer);
      timer = undefined;
      stream.write('\r\x1b[K');
    },
  };
}
