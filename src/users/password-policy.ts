/**
 * What a new password must be, after NIST SP 800-63B (revision 4, passwords as the only
 * factor): at least 15 characters and at most 1024, any characters, no composition rules (no
 * "one digit, one symbol"), and not one an attacker tries early. That last part is judged by
 * zxcvbn-ts (its common-password, name and word lists, and its patterns: repeats, sequences,
 * keyboard walks, dates, l33t), which must estimate at least 10^8 guesses with the account's own
 * words counted as known; and, beyond it, a password may not contain the username, the name
 * part of the email or the service's name (compared without case, spacing or punctuation, in
 * Unicode's compatibility form), nor be a walk along the keyboard's rows or columns. Every
 * reason is given at once.
 */
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

export const PASSWORD_MIN = 15;
export const PASSWORD_MAX = 1024;
/** zxcvbn's score 3: "safely unguessable: moderate protection from offline slow-hash scenario" (≥ 10^8 guesses). */
const MIN_SCORE = 3;
const SERVICE_WORDS = ['shipyard'];

const zxcvbn = new ZxcvbnFactory({
  dictionary: { ...common.dictionary, ...en.dictionary },
  graphs: common.adjacencyGraphs,
  translations: en.translations,
});

/** Walks along a keyboard (either way), which zxcvbn's adjacency does not all see. */
const WALKS = [
  'qwertyuiopasdfghjklzxcvbnm',
  '1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p',
  '1q2w3e4r5t6y7u8i9o0p',
  'zaq1xsw2cde3vfr4bgt5nhy6mju7',
].flatMap((s) => [s, [...s].reverse().join('')]);
/** The digit row's shifted symbols, as the keys they share (`!QAZ2wsx` walks `1qaz2wsx`). */
const UNSHIFT: Record<string, string> = {
  '!': '1',
  '@': '2',
  '#': '3',
  $: '4',
  '%': '5',
  '^': '6',
  '&': '7',
  '*': '8',
  '(': '9',
  ')': '0',
};

/** Lower case, compatibility form (full-width letters become letters), letters and digits only. */
const letters = (s: string) =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');

function isKeyboardWalk(password: string): boolean {
  const keys = [...password.toLowerCase()].map((c) => UNSHIFT[c] ?? c).join('');
  return keys.length >= 8 && WALKS.some((walk) => walk.repeat(Math.ceil(keys.length / walk.length) + 1).includes(keys));
}

export function passwordProblems(password: string, account: { username: string; email: string }): string[] {
  const problems: string[] = [];
  const length = [...password].length;
  if (length < PASSWORD_MIN)
    problems.push(
      `Password: at least ${PASSWORD_MIN} characters (this one has ${length}). A few unrelated words make a good one.`,
    );
  if (length > PASSWORD_MAX) problems.push(`Password: at most ${PASSWORD_MAX} characters.`);
  if (!password.trim()) return [...problems, 'Password: not only spaces.'];
  const names = [account.username, account.email.split('@')[0] ?? '', ...SERVICE_WORDS]
    .map(letters)
    .filter((n) => n.length >= 3);
  if (names.some((n) => letters(password).includes(n))) {
    problems.push('Password: it must not contain your username, your email address or the name of this service.');
  }
  if (length <= PASSWORD_MAX) {
    const result = zxcvbn.check(password.slice(0, 256), [...names, account.username, account.email]);
    if (result.score < MIN_SCORE || isKeyboardWalk(password)) {
      const why =
        result.feedback.warning ??
        (isKeyboardWalk(password) ? 'It is a walk along the keyboard.' : 'It is too easy to guess.');
      problems.push(`Password: an attacker would try it early. ${why} Add more unrelated words, or choose another.`);
    }
  }
  return problems;
}
