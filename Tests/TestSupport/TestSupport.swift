// Shared fakes and fixtures for the test targets.
