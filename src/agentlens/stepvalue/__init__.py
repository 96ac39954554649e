"""Agent Step Value (spec-step-value.md): replay a frozen trajectory through an evaluator LLM that
puts a belief on a fixed candidate set at every state, and measure how each step moved it, and how
much of that movement is the evaluation protocol itself (channels, label permutations)."""
