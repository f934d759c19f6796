// A hop between a client and the gateway (a load balancer, a proxy of the buyer's network) that can lose answers:
// the proxy tests' way of making a paid call's outcome unknown to the payer.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A hop in front of `gateway`: each request goes on to the gateway, which serves it whatever the hop does next;
 * `answer` then writes what the client gets, from the gateway's answer read whole. A request `forwards` refuses
 * never reaches the gateway: `answer` gets no gateway answer for it.
 */
export async function hopBefore(
  gateway: string,
  answer: (req: IncomingMessage, gateway: IncomingMessage | undefined, body: Buffer, res: ServerResponse) => void,
  forwards: (req: IncomingMessage) => boolean = () => true,
): Promise<{ url: string; close(): Promise<void> }> {
  const gatewayUrl = new URL(gateway);
  const hop = createServer((req, res) => {
    if (!forwards(req)) {
      req.resume().once('end', () => answer(req, undefined, Buffer.alloc(0), res));
      return;
    }
    const forwarded = httpRequest({ host: gatewayUrl.hostname, port: gatewayUrl.port, path: req.url, method: req.method, headers: req.headers }, async (reply) => {
      const chunks: Buffer[] = [];
      for await (const chunk of reply) chunks.push(chunk as Buffer);
      answer(req, reply, Buffer.concat(chunks), res);
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(hop.address() as AddressInfo).port}`, close: () => new Promise((resolve) => hop.close(() => resolve())) };
}

/** what a load balancer answers when the gateway took too long for it */
export const gatewayTimeout = (res: ServerResponse) => res.writeHead(504, { 'content-type': 'text/html' }).end('<html>gateway timeout</html>');

/** the gateway's answer passed on as it came */
const relay = (gateway: IncomingMessage, body: Buffer, res: ServerResponse) => res.writeHead(gateway.statusCode!, gateway.headers).end(body);

/** a paid call (x402 v2's payment header) */
export const isPaid = (req: IncomingMessage) => req.headers['payment-signature'] !== undefined;

/**
 * A hop that answers every paid call 504: those `forwards` lets through are served (and settled) at the gateway
 * first, the others never get there. Unpaid calls (the 402s) are relayed.
 */
export function losingPaidAnswers(gateway: string, forwards: (req: IncomingMessage) => boolean): ReturnType<typeof hopBefore> {
  return hopBefore(gateway, (req, answer, body, res) => (isPaid(req) ? gatewayTimeout(res) : relay(answer!, body, res)), forwards);
}

/** A hop that loses the first paid answer the gateway gave (served and charged there, answered 504 here). */
export function losingFirstPaidAnswer(gateway: string): ReturnType<typeof hopBefore> {
  let lose = true;
  return hopBefore(gateway, (req, answer, body, res) => {
    if (isPaid(req) && answer!.statusCode === 200 && lose) {
      lose = false;
      return gatewayTimeout(res);
    }
    relay(answer!, body, res);
  });
}
