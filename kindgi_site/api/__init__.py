"""The API's roof: the URLs of every app's endpoints, and one handler that turns every app's
errors into the error body."""
