// `node --test --require out/test/setup.js`: every `require('vscode')` gets the mock.
import Module from 'module';
import * as path from 'path';

const mock = path.join(__dirname, 'vscode-mock.js');
const original = (Module as any)._resolveFilename;
(Module as any)._resolveFilename = function (request: string, ...rest: unknown[]) {
  if (request === 'vscode') return mock;
  return original.call(this, request, ...rest);
};
