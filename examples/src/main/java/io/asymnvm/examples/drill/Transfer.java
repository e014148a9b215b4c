package io.asymnvm.examples.drill;

/** One transfer a worker announced with {@code BEGIN seq from to amount}. */
record Transfer(long seq, int from, int to, long amount) {
    @Override
    public String toString() {
        return "transfer #" + seq + " of " + amount + " from account " + from + " to " + to;
    }
}
