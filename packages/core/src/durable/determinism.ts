/**
 * The tools module's stubs with the program's `random` module seeded from the run (a resumed or
 * replayed run has the same seed, so the same "random" numbers). The interpreter's hash seed is
 * fixed by the relay (PYTHONHASHSEED=0: set and dict-of-str orders repeat). What still differs
 * between runs: the time, `os.urandom`/`secrets`/`uuid4`, the network, and thread scheduling.
 */
export function seededStubs(stubsSource: string, seed: string): string {
  return `${stubsSource}\n\nimport random as _codeaction_random\n\n_codeaction_random.seed(${JSON.stringify(seed)})\n`;
}
