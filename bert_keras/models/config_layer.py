"""The base of the layers whose constructor arguments are their Keras config."""

import keras


class ConfigLayer(keras.layers.Layer):
  """Keeps the constructor arguments named in CONFIG as attributes (`self.keep_config(locals())`)
  and returns them from get_config."""

  CONFIG = ()

  def keep_config(self, arguments) -> None:
    for name in self.CONFIG:
      setattr(self, name, arguments[name])

  def get_config(self):
    return {**super().get_config(), **{name: getattr(self, name) for name in self.CONFIG}}
