import { connect, type Socket } from 'node:net';
import { McpError } from '../../errors.js';

/** Connects to the daemon's socket; rejects with the OS's reason (ENOENT, ECONNREFUSED) within `timeoutMs`. */
export function connectSocket(path: string, timeoutMs = 10_000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new McpError('unavailable', `the pool daemon at ${path} did not accept the connection within ${timeoutMs} ms`, {}));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    });
  });
}
