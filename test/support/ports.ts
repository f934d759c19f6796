// A loopback port that was free a moment ago: for a server the test starts next, or, left unused, for an
// address where connections are refused at once (an upstream that is down).
import { createServer } from 'node:net';

export async function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
