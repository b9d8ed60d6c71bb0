/**
 * The password policy's thread (src/users/password-thread.ts): loads zxcvbn's dictionaries, says
 * { ready: true }, then answers each { id, password, account } with { id, problems } (or
 * { id, error } should the check throw), one at a time.
 */
import { parentPort } from 'node:worker_threads';
import { loadPasswordChecker, passwordProblems } from './password-policy.js';

type Question = { id: number; password: string; account: { username: string; email: string } };

const port = parentPort;
if (!port) throw new Error('password-worker.ts runs as a worker thread (src/users/password-thread.ts)');
const loading = loadPasswordChecker();
// Dictionaries that fail to load end this thread (the rejection is left unhandled on purpose):
// its starter's `ready` then fails with the reason.
loading.then(() => port.postMessage({ ready: true }));
port.on('message', async ({ id, password, account }: Question) => {
  try {
    await loading;
    port.postMessage({ id, problems: await passwordProblems(password, account) });
  } catch (err) {
    port.postMessage({ id, error: (err as Error).message });
  }
});
