/** keys show <prefix> → GET /admin/keys/<prefix>. */
import { keyPath } from './admin-client.ts';
import { onePrefix, type Command } from './command.ts';

export const keysShow: Command = {
  words: ['keys', 'show'],
  options: {},
  request({ args }) {
    return { method: 'GET', path: keyPath(onePrefix(args, 'keys show')) };
  },
};
