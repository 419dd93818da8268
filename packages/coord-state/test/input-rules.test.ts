// Proves the shared input rules: names, holder ids and node ids by their patterns, and the JSON-value rule with the path of the first problem (depth, lone surrogates, __proto__ keys, non-JSON values), iterative on very deep input.
import t from 'tap';
import {
  findJsonValueProblem,
  isJsonValue,
  isName,
  isNodeId,
  isPrintableId,
  JSON_DEPTH_MAX,
  NAME_RULE,
} from '../src/index.js';

t.test('names: 1-200 characters of the set, letter or digit first', async (t) => {
  t.ok(isName('a'));
  t.ok(isName('a.b:c-D_9'));
  t.ok(isName('N'.repeat(NAME_RULE.charsMax)));
  t.notOk(isName('N'.repeat(NAME_RULE.charsMax + 1)));
  t.notOk(isName(''));
  t.notOk(isName('.hidden'));
  t.notOk(isName('a/b'));
  t.notOk(isName('a~b'));
  t.notOk(isName(5));
});

t.test('holder ids: printable, lengths in code points', async (t) => {
  t.ok(isPrintableId('me 😀'));
  t.ok(isPrintableId('😀'.repeat(200)), '200 astral characters are 200 characters');
  t.notOk(isPrintableId('x'.repeat(201)));
  t.notOk(isPrintableId(''));
  t.notOk(isPrintableId('a\nb'));
  t.notOk(isPrintableId('a\u0085b'));
  t.notOk(isPrintableId('x\ud800'), 'a lone surrogate is not printable');
});

t.test('node ids', async (t) => {
  t.ok(isNodeId('n1'));
  t.ok(isNodeId('node_a-1'));
  t.notOk(isNodeId('-n'));
  t.notOk(isNodeId('n'.repeat(65)));
});

t.test('JSON values: the first problem and its path', async (t) => {
  t.equal(findJsonValueProblem({ a: [1, 'x', null, true, { b: 2 }] }), null);
  t.same(findJsonValueProblem({ a: ['ok', '\udfff'] })?.path, ['a', 1]);
  t.match(findJsonValueProblem('\ud800')?.problem, /lone UTF-16 surrogate/);
  t.same(findJsonValueProblem({ a: { 'k\ud800': 1 } })?.path, ['a'], 'a bad key names its object');
  const proto = JSON.parse('{"a":{"__proto__":{"x":1}}}') as unknown;
  t.same(findJsonValueProblem(proto), {
    path: ['a', '__proto__'],
    problem: 'keys named __proto__ are not allowed',
  });
  t.same(findJsonValueProblem({ n: Infinity })?.path, ['n']);
  t.match(findJsonValueProblem(new Date())?.problem, /plain JSON object/);
  t.match(findJsonValueProblem({ f: () => 1 })?.problem, /not a JSON value/);
  t.notOk(isJsonValue(undefined));
  t.ok(isJsonValue({ constructor: { prototype: { x: 1 } } }), 'constructor.prototype is data');
});

t.test('JSON values: depth bound, reported at the root, iterative', async (t) => {
  const nest = (n: number): unknown => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`);
  t.ok(isJsonValue(nest(JSON_DEPTH_MAX)));
  t.same(findJsonValueProblem(nest(JSON_DEPTH_MAX + 1)), {
    path: [],
    problem: `nests deeper than ${JSON_DEPTH_MAX} levels`,
  });
  t.notOk(isJsonValue(nest(100_000)), 'no stack overflow');
});
