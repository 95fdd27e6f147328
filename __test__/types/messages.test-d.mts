// The messages a mistake gets, not only that it fails: each line after an
// `// error: TEXT` comment must fail with a diagnostic that contains TEXT,
// and no other line may fail. Checked by scripts/type-messages.mjs with
// TypeScript 7 (which reports only the last overload of a call that matches
// none) and with 5.7 (which reports each).
import { Context } from '@deepseek-ai/cordis'
import { ShellEnvRegistry } from '@deepseek-ai/dsh-shell-env'

declare const ctx: Context
const dshhome = '/opt/dsh'

// error: 'dshhome' does not exist in type 'ShellEnvConfig'. Did you mean to write 'dshHome'?
new ShellEnvRegistry({ dshhome })
// error: 'dshhome' does not exist in type 'ShellEnvConfig'. Did you mean to write 'dshHome'?
new ShellEnvRegistry(ctx, { dshhome })
// error: 'dshhome' does not exist in type 'ShellEnvConfig'. Did you mean to write 'dshHome'?
ctx.plugin(ShellEnvRegistry, { dshhome })
// error: 'profle' does not exist in type 'ShellEnvConfig'. Did you mean to write 'profile'?
new ShellEnvRegistry({ dshHome: '/opt/dsh', profle: { name: 'work', dir: '/profiles/work' } })
// error: Type 'number' is not assignable to type 'string'.
new ShellEnvRegistry({ dshHome: 42 })
// error: Property 'dir' is missing in type '{ name: string; }' but required in type 'ShellEnvProfile'.
new ShellEnvRegistry({ profile: { name: 'work' } })
