class ValidationError extends Error {
  constructor(field, msg) { super(msg); this.name = 'ValidationError'; this.field = field; }
}
function validate(u) {
  if (!u.email.includes('@')) throw new ValidationError('email', `bad email: ${u.email}`);
  return true;
}
for (const u of [{ email: 'a@b.c' }, { email: 'nope' }]) {
  try { console.log(validate(u)); } catch (e) {
    console.log(e instanceof ValidationError, e instanceof Error, e.name, e.message, e.field);
  }
}
try { null.x; } catch (e) { console.log(e.constructor.name); }
try { undefinedFn(); } catch (e) { console.log(e.name); }
try { JSON.parse('{bad'); } catch (e) { console.log(e.name); }
try { new Array(-1); } catch (e) { console.log(e.name); }
const err = new Error('outer', { cause: new Error('inner') });
console.log(err.cause.message, String(err));
try { throw 'a string'; } catch (e) { console.log(typeof e, e); }
function risky() { try { return 'try'; } finally { console.log('finally runs'); } }
console.log(risky());
