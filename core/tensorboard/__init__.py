"""TensorBoard beside the app: launching it on a run as a child process (one per folder, never outliving
the app) and writing a run's checkpoint history as event files it shows."""
