/** keys suspend|resume|revoke <prefix> → POST /admin/keys/<prefix>/<action>. */
import { keyPath } from './admin-client.ts';
import { onePrefix, type Command } from './command.ts';

function statusCommand(action: 'suspend' | 'resume' | 'revoke'): Command {
  return {
    words: ['keys', action],
    options: {},
    request({ args }) {
      return { method: 'POST', path: keyPath(onePrefix(args, `keys ${action}`), action) };
    },
  };
}

export const keysSuspend = statusCommand('suspend');
export const keysResume = statusCommand('resume');
export const keysRevoke = statusCommand('revoke');
