/**
 * JMH micro-benchmarks. They are never part of {@code mvn verify}; each class's javadoc gives its run command.
 */
package io.asymnvm.bench;
