/** What a plugin module's path or URL ends in, before its query (load-plugin-module.ts loads these). */
const MODULE_NAME = /^(?:file:.*|.*\.(?:[cm]?[jt]s|tsx?|jsx?))$/i;

const namesModule = (text: string): boolean => MODULE_NAME.test(text.trim().split('?')[0]!);

/**
 * The modules `--tool` values name: each value may hold several, `a.ts,b.ts`, as the README shows.
 * A comma splits only where the text on each side of it names a module; otherwise it belongs to the
 * module it is in, in a query (`plugin.ts?names=a,b`, which split at every comma was the module
 * `plugin.ts?names=a` and a module `b`) or in a folder's name (`tools/v1,2/plugin.ts`). An empty
 * piece splits too (`a.ts,`). Items are trimmed; empty ones dropped.
 */
export function toolModuleList(values: readonly string[]): string[] {
  const modules: string[] = [];
  for (const value of values) {
    let current: string | undefined;
    for (const piece of value.split(',')) {
      if (current === undefined || (namesModule(current) && namesModule(piece)) || current.trim() === '' || piece.trim() === '') {
        if (current !== undefined) modules.push(current);
        current = piece;
      } else {
        current += `,${piece}`;
      }
    }
    if (current !== undefined) modules.push(current);
  }
  return modules.map((m) => m.trim()).filter((m) => m !== '');
}
