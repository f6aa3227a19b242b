"""Self-employment classifiers: the Dutch 5+4 test and the FR/DE/BE tests, scored from versioned rulesets."""
